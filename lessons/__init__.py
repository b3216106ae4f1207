"""The lessons, one folder each (page.py, prose.md, questions.py and the views only it draws), and the order
the course takes through them: the navigation, the home page, every page's number and its previous / next
links read this one table.

The order: the task first (predict the next token; the bigram model shows what one token of context buys
and what it cannot see), then why attention (a word needs the words before it; an average of the past is
the first, fixed weighting, which queries and keys make depend on the words: QKV opens with it), then
attention's parts in the order the data flows through them (projections, scaling, masking, heads), what
attention does with context and order, the block around it, the whole model, how it learns, what each piece
of it buys (the ladder from the bigram to a transformer, every rung trained and scored: it needs the loss, the
validation split and the live training of the lesson before it), what a trained model's heads do, and last the
advanced page on computing attention in tiles, which needs everything before it and nothing after it needs.
Position vectors are first taught in QKV, where its trained view first uses them; the random views up to
Multi-head leave them out, and Context and order shows what order needs them for."""

from ui.frame.nav import Course, Lesson

COURSE = Course((
    # folder, title, link, icon, the pipeline step it explains
    Lesson("bigram", "Bigram model", "bigram", ":material/text_fields:",
           "the task: predict the next token; counts → probabilities"),
    Lesson("qkv", "QKV projection", "qkv", ":material/key:",
           "why attention: an average of the past → Q, K, V → scores"),
    Lesson("scaling", "Scaling", "scaling", ":material/straighten:", "scores ÷ √d_k → softmax"),
    Lesson("masking", "Masking", "masking", ":material/visibility_off:", "causal mask → weighted sum"),
    Lesson("multi_head", "Multi-head", "multi-head", ":material/view_column:", "heads → concat → W_O"),
    Lesson("communication", "Context and order", "communication", ":material/forum:",
           "tokens talk: context, order, cross-attention"),
    Lesson("block", "The transformer block", "block", ":material/view_agenda:",
           "layer norm → attention → FFN, residual sums"),
    Lesson("full_model", "Full model", "model", ":material/psychology:", "blocks → logits → next token"),
    Lesson("training", "Training", "training", ":material/model_training:", "loss → gradients → learning"),
    Lesson("ladder", "What each piece buys", "ladder", ":material/stairs:",
           "bigram → heads → feed-forward → residuals → layer norm → blocks, each measured"),
    Lesson("circuit", "Induction circuit", "circuit", ":material/repeat:", "previous-token head → induction head"),
    Lesson("tiles", "Attention in tiles", "tiles", ":material/grid_view:",
           "advanced: attention one block of keys at a time"),
))
