"""What the solver families share: results and time budgets, random numbers, the batch and
replay driver of jitted loops, warm starts, the fallback step and the single-problem driver."""
