"""Audits: membership-inference attacks and empirical ε lower bounds, as pure functions of scores."""
