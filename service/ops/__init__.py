"""Operations, the top layer of the service: the command line, the bootstrap (runtime.py), the
operator's commands, health, trim and retention, capacity."""
