"""TensorFlow's guide "Using the SavedModel format" (site/en/guide/saved_model.ipynb): loading a
SavedModel from a directory where none was saved (the guide's MobileNet directory when its
pretrained weights could not be downloaded). Recorded with TensorFlow 2.21 (/tmp/tf).

The cells run unchanged with ``tf`` bound to tapejax (see guide_harness); cell 6's save of the
MobileNet model is left out (tapejax has no tf.keras.applications), so its directory is empty.
"""
import pytest

from guide_harness import run_cells

CELLS = {
    1: r'''import os
import tempfile

import numpy as np

tmpdir = tempfile.mkdtemp()''',
    6: r'''mobilenet_save_path = os.path.join(tmpdir, "mobilenet/1/")''',   # the cell's first line
    7: r'''loaded = tf.saved_model.load(mobilenet_save_path)
print(list(loaded.signatures.keys()))  # ["serving_default"]''',
}


def test_loading_where_nothing_was_saved_raises_tensorflows_oserror():
    # TF 2.21: OSError: SavedModel file does not exist at: /tmp/tmpi57fxzz3/mobilenet/1//{saved_model.pbtxt|saved_model.pb}
    with pytest.raises(OSError) as e:
        run_cells(CELLS, [1, 6, 7], 7)
    assert type(e.value) is OSError   # a plain OSError, as TensorFlow's loader raises
    where = str(e.value)
    assert where.startswith("SavedModel file does not exist at: /tmp/")
    assert where.endswith("/mobilenet/1//{saved_model.pbtxt|saved_model.pb}")
