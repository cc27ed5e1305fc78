"""Classical learners (scikit-learn) and the weighted "democracy" ensemble."""
