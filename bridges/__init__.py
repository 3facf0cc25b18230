"""Bridges: standalone processes that host cinq on another chat platform through the public webhook
contract only (signed HTTP both ways).  Nothing here imports ``engine``, ``service`` or ``adapters``."""
