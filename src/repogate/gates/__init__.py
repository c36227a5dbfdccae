"""Gates: one module per gate, each exposing a function that returns a receipt's observation."""
