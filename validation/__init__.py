"""convdispatch.validation"""
