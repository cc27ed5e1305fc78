"""The results tables: every evaluator beside the baselines, where the errors come from, how deep the labels are,
what the one-ply choice is worth, what a decision costs."""
