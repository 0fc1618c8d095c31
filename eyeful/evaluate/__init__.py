"""`eyeful eval`: measure a review setup on cases with ground truth, and mine such cases."""
