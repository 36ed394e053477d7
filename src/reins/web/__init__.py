"""The web layer: ``reins serve`` (a local dashboard) and ``reins report --html`` (one file).

It sits beside ``cli`` at the top of the layers and reaches state only through the Store
protocol. Starlette, uvicorn and Jinja2 (extra ``reins-quest[web]``) are imported by the modules
that need them, never by ``import reins``.
"""
