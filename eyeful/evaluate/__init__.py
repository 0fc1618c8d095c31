"""`eyeful eval`: measure a review setup on cases with ground truth (cases, judges, runner, mine)."""
