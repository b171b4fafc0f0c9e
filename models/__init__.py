"""convdispatch.models"""
