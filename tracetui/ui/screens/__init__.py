"""Screens: main (runs, swimlanes, detail), help and problems."""
