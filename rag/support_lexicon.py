"""Words the support check (rag.support) reads for what a sentence claims, not just what it mentions.

A wrong sentence over a passage usually keeps the passage's words and changes one thing: a "not", a word
for its opposite, a "more" for a "less". These lists are data: to teach the check a pair it misses, add
the pair here (tests/test_support.py checks each kind).
"""

# Words that negate what follows. English contractions are expanded before matching (core of "can't").
NEGATIONS_EN = frozenset("""not no never none nothing nobody neither nor cannot without lack lacks lacking
fail fails failed unable instead rather""".split())
# Phrases with a negation word that negate nothing: "no later than" is "by", "not only … but" adds
NOT_NEGATIONS_EN = ("no later than", "no sooner than", "no more than", "no less than", "no fewer than", "not only",
                    "not just", "no matter", "no doubt", "not to mention", "nothing but", "not least")
# Chinese negation markers, longest first where one contains another; 难 ("hard to") negates as 不 does
# ("RNN 难以捕捉…" says what "RNN 不擅长捕捉…" says)
NEGATIONS_ZH = ("没有", "并非", "无法", "不能", "不会", "不是", "不可", "不必", "未能", "从未", "毫无", "难以", "不", "没", "无",
                "非", "未", "难")
# Words that start with a negation character but negate nothing ("不同" is "different", "非常" "very")
NOT_NEGATIONS_ZH = ("不同", "不断", "不仅", "不过", "不少", "不久", "不妨", "不管", "不论", "不如", "不但", "不然", "不外",
                    "不得不", "非常", "无论", "未来", "无数", "无穷", "没错", "并非只", "非但", "难度", "难道", "难点",
                    "无监督")

# Opposites a near-miss swaps in: either word of a pair stands for the other's negation.
ANTONYMS = [
    ("more", "less"), ("more", "fewer"), ("most", "least"), ("increase", "decrease"), ("increases", "decreases"),
    ("higher", "lower"), ("high", "low"), ("larger", "smaller"), ("large", "small"), ("bigger", "smaller"),
    ("longer", "shorter"), ("faster", "slower"), ("easier", "harder"), ("easy", "hard"), ("easy", "difficult"),
    ("before", "after"), ("first", "last"), ("similar", "different"), ("same", "different"), ("always", "never"),
    ("all", "none"), ("true", "false"), ("positive", "negative"), ("maximum", "minimum"), ("maximize", "minimize"),
    ("upper", "lower"), ("left", "right"), ("inside", "outside"), ("global", "local"), ("public", "private"),
    ("input", "output"), ("start", "end"), ("begin", "end"), ("add", "remove"), ("open", "close"),
    ("convex", "concave"), ("overfitting", "underfitting"), ("strong", "weak"), ("stronger", "weaker"),
    ("better", "worse"), ("best", "worst"), ("common", "rare"), ("simple", "complex"), ("simpler", "complex"),
    ("discrete", "continuous"), ("supervised", "unsupervised"), ("linear", "nonlinear"), ("safe", "unsafe"),
    ("required", "optional"), ("allow", "prohibit"), ("allows", "prohibits"), ("permit", "prohibit"),
    ("include", "exclude"), ("includes", "excludes"), ("accept", "reject"), ("increase", "reduce"),
    ("增大", "减小"), ("增加", "减少"), ("提高", "降低"), ("上升", "下降"), ("变大", "变小"), ("大于", "小于"),
    ("高于", "低于"), ("多于", "少于"), ("更多", "更少"), ("最大", "最小"), ("最大化", "最小化"), ("极大", "极小"),
    ("上界", "下界"), ("正类", "反类"), ("正例", "反例"), ("正", "负"), ("凸", "凹"), ("离散", "连续"), ("有监督", "无监督"),
    ("监督", "无监督"), ("过拟合", "欠拟合"), ("强", "弱"), ("简单", "复杂"), ("容易", "困难"), ("相同", "不同"),
    ("相似", "不同"), ("之前", "之后"), ("前", "后"), ("输入", "输出"), ("全局", "局部"), ("线性", "非线性"), ("常用", "少用"),
    ("可变", "不可变"), ("必须", "可选"), ("允许", "禁止"), ("包含", "排除"), ("升高", "降低"), ("增强", "减弱"), ("困难", "简单"),
]

# Prefixes that turn a word into its opposite ("mutable" / "immutable", "安全" / "不安全")
OPPOSITE_PREFIXES_EN = ("im", "in", "un", "non", "ir", "il", "dis")
OPPOSITE_PREFIXES_ZH = ("不", "非", "无", "反")

# Chinese numerals as digits, so "三个" and "3 个" are the same number to the number check; read only before a
# measure word, and 一 never (一个 is "a", and 一 is in 一般, 统一, 一致)
ZH_MEASURE_WORDS = "个种次类层步倍维项阶元章节页年月天位名条组轮"
ZH_NUMERALS = {"零": "0", "一": "1", "二": "2", "两": "2", "三": "3", "四": "4", "五": "5", "六": "6", "七": "7",
               "八": "8", "九": "9", "十": "10", "百": "100", "千": "1000", "万": "10000", "亿": "100000000"}
# English number words
# English number words, read as numbers only before a noun ("three digits", not "the two are equal"); "one"
# is left out: it is far more often a pronoun ("if you learn one")
NUMBER_WORDS = {"zero": "0", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
                "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
                "fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19",
                "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
                "eighty": "80", "ninety": "90", "hundred": "100", "thousand": "1000"}
# tens and a unit joined ("fifty-two") are one number; "one" counts here ("twenty-one")
UNIT_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
# a month before a day ("March 13") is that month's number, as "3 月 13 日" writes it
MONTHS = {m: str(i) for i, m in enumerate("january february march april may june july august september october "
                                          "november december".split(), start=1)}
NOT_NOUNS_AFTER_NUMBER = frozenset("are is were was be of and or to in on at for with by as than that which who "
                                   "the a an".split())
