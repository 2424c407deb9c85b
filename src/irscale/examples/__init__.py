__all__: list[str] = []  # its modules are imported by name
