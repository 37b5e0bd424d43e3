"""The web UI's views: plain functions of the shared ``Pages`` (and what else each needs) and the
request; ``ui.app`` binds them to their URLs in one table."""
