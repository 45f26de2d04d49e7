"""Forms: a JSON Schema turned into an ipywidgets input form (``SchemaForm``), for tool arguments and
elicitation (DESIGN decision 9).

Owns schema preparation (``schema``: ``$ref``, ``allOf``, classification), the field builders (``fields``:
scalars; ``containers``: object, array, map, union, nullable; ``table``: rows of flat objects, a DataFrame,
as a grid with paste and a notebook variable) and the form itself (``form``). May import
``tools``, ``engine`` and the package's lower layers, and nothing else in ``notebook/``: a form knows schemas,
not calls, connections or servers (tests/test_layers.py).
"""
