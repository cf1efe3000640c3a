"""The autodiff core: tensors, the one state model, the engine (apply/record), the backward pass, tapes, Variables and modules."""
