"""Shared by every part: where things live in a checkout (paths), what the CLI writes to a terminal (term), and
reading and writing files someone else may have planted (regfile). Imports nothing else of errbook but errors."""
