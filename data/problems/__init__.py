"""convdispatch.data.problems"""
