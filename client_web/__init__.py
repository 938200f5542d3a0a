"""solrace's browser client: static files only (``static/``), served by the race server
(``server/http_static.py``) on its websocket port. No Python code runs here; the package
exists so the files ship inside the Python distribution (package data)."""
