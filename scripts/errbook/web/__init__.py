"""The site: a Material for MkDocs site generated from the entries, the ledger and executed runbooks, and the
paste page's engine.

plugin.py is the MkDocs adapter (the only module that imports MkDocs). Pages are built by entrypage.py (one
function per section), runpage.py and indexpages.py, from escape.py (the one escaping), phrases.py (what an
entry says in a few words), status.py (verification badges) and refs.py (links). addresses.py is the one address
map, shared with the paste page through bundle.py, which also ships the data the JS engine (assets/engine.js)
needs. Not called `site`: that is a standard-library module.
"""
