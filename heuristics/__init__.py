"""convdispatch.heuristics"""
