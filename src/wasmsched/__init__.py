"""wasmsched."""
