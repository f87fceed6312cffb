"""The main screen's widgets; each renders one thing and posts messages upward."""
