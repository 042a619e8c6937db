"""The workspace: configuration files, the rules they select, and the files to lint, each found with
the settings that govern it (resolved once, here, and carried with the file).
"""
