"""Graph passes: fusion, lifetimes, in-place, scheduling, arena placement."""
