"""Index storage. ``Store`` is the interface; ``open_store`` picks the implementation."""
