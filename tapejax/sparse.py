"""placeholder"""
class SparseTensor:
    pass
