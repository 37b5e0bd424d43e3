"""`mnemoclaw ui`: a web app on this machine for looking inside one agent's memory."""
