"""convdispatch.dispatcher"""
