"""gauge: readings as percentages."""
