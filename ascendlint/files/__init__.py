"""User files: read safely, decoded byte-exactly, written back atomically; what a run leaves behind
(temporary files, pool workers) goes when the run ends, however it ends.
"""
