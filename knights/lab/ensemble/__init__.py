"""Training the classical learners (KNN, random forest, SVR, linear) and fitting the democracy's weights:
``knights ensemble``."""
