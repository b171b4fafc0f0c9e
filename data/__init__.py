"""convdispatch.data"""
