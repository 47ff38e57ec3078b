"""What-if questions on the simulator: ``capacity`` (how much more fits), ``diff`` (two
configurations compared pod by pod) and ``sweep`` (many runs, locally or on Ray)."""
