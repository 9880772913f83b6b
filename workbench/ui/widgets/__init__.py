"""Small reusable widgets, each knowing nothing of the window or a run.

digit_canvas         the Draw tab's drawing canvas
input_preview        the Draw tab's model-input preview
photo_view           the picture a photo model reads, as the user gave it
draw_widgets         the Draw tab's widgets in one import, and its wrapped label
cell_images          the Evaluation tab's gallery of one cell's images
class_scores_table   the Evaluation tab's precision, recall and F1 of each class
augment_strip        a strip of augmented training images
preprocessing_label  the line saying what is done to each image
model_combo          a combo box of models by family, with a name filter
python_highlighter   Python syntax colours for a read-only code view
lazy_view            views that skip their work while hidden
issue_gallery        a table of flagged images with thumbnails, drawn when in view
"""

__all__ = [
    "augment_strip",
    "cell_images",
    "class_scores_table",
    "digit_canvas",
    "draw_widgets",
    "input_preview",
    "issue_gallery",
    "lazy_view",
    "model_combo",
    "photo_view",
    "preprocessing_label",
    "python_highlighter",
]
