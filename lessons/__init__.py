"""The lessons, one folder each (page.py, prose.md, questions.py and the views only it draws), and the order
the course takes through them: the navigation, the home page, every page's number and its previous / next
links read this one table."""

from ui.frame.nav import Course, Lesson

COURSE = Course((
    # folder, title, link, icon, the pipeline step it explains
    Lesson("qkv", "QKV projection", "qkv", ":material/key:", "embeddings → Q, K, V → scores"),
    Lesson("scaling", "Scaling", "scaling", ":material/straighten:", "scores ÷ √d_k → softmax"),
    Lesson("masking", "Masking", "masking", ":material/visibility_off:", "causal mask → weighted sum"),
    Lesson("multi_head", "Multi-head", "multi-head", ":material/view_column:", "heads → concat → W_O"),
    Lesson("communication", "Context and order", "communication", ":material/forum:",
           "tokens talk: context, order, cross-attention"),
    Lesson("tiles", "Attention in tiles", "tiles", ":material/grid_view:", "one block of keys at a time"),
    Lesson("bigram", "Bigram model", "bigram", ":material/text_fields:", "counts → probabilities → text"),
    Lesson("full_model", "Full model", "model", ":material/psychology:", "blocks → logits → next token"),
    Lesson("circuit", "Induction circuit", "circuit", ":material/repeat:", "previous-token head → induction head"),
    Lesson("training", "Training", "training", ":material/model_training:", "loss → gradients → learning"),
))
