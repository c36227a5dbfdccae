"""Reports: terminal tables and JSON, read from decisions and the store only."""
