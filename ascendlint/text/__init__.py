"""Text and positions: offsets to rows and columns, node locations, code generation, lazy patterns.
"""
