"""Model providers behind one small interface."""
