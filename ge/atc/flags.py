"""The one ATC flag table (spec/atc-cli.md §5, §6, §8.1; decisions table).

Every command-line flag is one `Flag` record.  Table order is help order; `HIDDEN` flags exist
but are not listed in the help.  The parser (`parse.py`), the help text (`help.py`), the GE
option map (`options.py`) and the compatibility matrix (`matrix.py`) are all functions over
`FLAGS`; nothing else lists flags.  This module knows no parsing and prints nothing.
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable

__all__ = ["Flag", "FLAGS", "BY_NAME", "STRING", "INT", "BOOL", "HONOURED", "NO_EFFECT",
           "REFUSED", "GROUPS", "HIDDEN", "FRAMEWORK_NAMES", "flag", "refused_value"]

STRING, INT, BOOL = "string", "int", "bool"
HONOURED, NO_EFFECT, REFUSED = "honoured", "accepted without effect", "refused"

# Help sections in order; `None` marks the advanced heading printed before [Feature].
GROUPS = ("General", "Input", "Output", "Target", "Feature", "Model Tuning",
          "Operator Tuning", "Debug")
HIDDEN = ""

# Framework numbers and the names the E10007 message gives them (§3.6).
FRAMEWORK_NAMES = {"0": "Caffe", "1": "MindSpore", "3": "TensorFlow", "5": "Onnx"}


# One flag: a namedtuple (not a dataclass) because `--help` reads this table and must not pay
# for importing dataclasses.  Fields and their meaning:
#   kind         STRING / INT / BOOL
#   group        one of GROUPS, or HIDDEN
#   help         first help line, our own words
#   choices      parse-time value set (§3.6); empty = any value
#   choice_code  code raised when the value is not in `choices`
#   ge_key       GE option key the value travels under (§8.1 / §8.2)
#   name_table   ge_key appears in ATC's option-name table (§8.1)
#   alias_keys   further §8.1 keys that name this flag
#   emit         option map: always / nonempty / explicit (user-set only)
#   to_option    value conversion for the option map
#   registered   a registered optimisation flag (§6.10)
#   refuse       for REFUSED: does this value trigger it
#   note         compatibility-matrix remark
#   extra_help   further help lines (indented to the description column)
Flag = namedtuple(
    "Flag", "name kind default group help choices choice_code ge_key name_table alias_keys emit "
            "to_option registered support refuse note extra_help",
    defaults=((), "", "", True, (), "always", None, False, HONOURED, None, "", ()))


def _non_default(default: str) -> Callable[[str], bool]:
    return lambda value: value not in ("", default)


_LOW_PRECISION_TYPES = ("HIF8", "HIF4", "FP8E5M2", "FP8E4M3FN")


def _refused_output_type(value: str) -> bool:
    tokens = [part.rsplit(":", 1)[-1].strip() for part in value.split(";") if part.strip()]
    return any(token.upper() in _LOW_PRECISION_TYPES for token in tokens)


def _lower(value: str) -> str:
    return value.lower()


def _one_or_zero_if_true(value: str) -> str:
    return "1" if value == "true" else "0"


def _true_if_one(value: str) -> str:
    return "true" if value == "1" else "false"


def _implmode_default(value: str) -> str:
    return value or "high_performance"


_F = Flag
_ZERO_ONE = ("0", "1")
_PRECISION = ("force_fp16", "force_fp32", "cube_fp16in_fp32out", "allow_mix_precision",
              "allow_fp32_to_fp16", "must_keep_origin_dtype", "allow_mix_precision_fp16",
              "allow_mix_precision_bf16", "allow_fp32_to_bf16")
_PRECISION_V2 = ("fp16", "origin", "cube_fp16in_fp32out", "mixed_float16", "mixed_bfloat16",
                 "cube_hif8", "mixed_hif8")
_IMPLMODE = ("high_precision", "high_performance", "high_precision_for_all",
             "high_performance_for_all")

FLAGS: tuple[Flag, ...] = (
    # ---------------------------------------------------------------- [General]
    _F("help", BOOL, "false", "General", "Show this help message and exit."),
    _F("mode", INT, "0", "General", "Run mode. 0 (default): generate an offline model;",
       choices=("0", "1", "3", "5", "6", "7", "30"), choice_code="E10001",
       extra_help=("1: convert a model (OM or original) to JSON;",
                   "3: only pre-check the model;", "5: convert a GE dump graph text to JSON;",
                   "6: display the information of an offline model;",
                   "30: generate an execute-om for nano SoCs."),
       note="7 and 30 are validated, then refused (EP0002)"),
    _F("raw_ge_options", STRING, "", "General",
       "JSON file of GE compile options (global/session/graph levels) to import.",
       note="also accepts ge.exec.exclude_engines, ge.py_pass_timeout and "
            "ge.op_compiler_remote_cache at any level"),
    _F("raw_ge_options_ignore_unsupported", BOOL, "false", "General",
       "Skip unsupported keys of --raw_ge_options instead of failing."),
    # ---------------------------------------------------------------- [Input]
    _F("model", STRING, "", "Input", "Model file to compile (.onnx, .air, .pb, .prototxt)."),
    _F("weight", STRING, "", "Input", "Weight file; required for Caffe (.caffemodel).",
       note="Caffe only; checked against the prototxt (E11029, E11033)"),
    _F("om", STRING, "", "Input",
       "Input file of --mode=1/5/6: an offline model, an original model or a dump graph text."),
    _F("framework", INT, "-1", "Input",
       "Source framework: 0 Caffe, 1 MindSpore (.air), 3 TensorFlow, 5 ONNX.",
       choices=("0", "1", "3", "5"), choice_code="E10007", ge_key="ge.frameworkType",
       note="0 is validated, then refused (EP0002); 3 reads frozen GraphDefs (.pb, .pbtxt)"),
    _F("input_format", STRING, "", "Input",
       "Layout of the model inputs: NCHW, NHWC, ND, NCDHW or NDHWC (framework dependent).",
       ge_key="input_format", emit="nonempty"),
    _F("input_shape", STRING, "", "Input", "Shapes of the model inputs, for example",
       ge_key="input_shape", alias_keys=("ge.inputShape",), emit="nonempty",
       extra_help=('"input_name1:n1,c1,h1,w1;input_name2:n2,c2,h2,w2"',
                   '"input_name1:-1,3,224,224" or "input_name1:1~4,3,224,224" (dynamic)')),
    _F("input_hint_shape", STRING, "", "Input",
       "Shape hints for dynamic inputs: \"0:[d0,d1];1:[d0,d1]\".",
       ge_key="ge.inputHintShape", emit="nonempty",
       note="the shape an unknown-shape model is compiled at in the OM"),
    _F("input_shape_range", STRING, "", "Input",
       "(Deprecated, use --input_shape) shape ranges of the inputs.",
       ge_key="input_shape_range", emit="nonempty",
       note="an unknown-shape model, docs/dynamic-shapes.md"),
    _F("dynamic_batch_size", STRING, "", "Input", "Batch-size gears, for example \"1,2,4,8\".",
       ge_key="ge.dynamicBatchSize", emit="nonempty",
       note="one compiled graph per gear under a Case root (docs/dynamic-shapes.md)"),
    _F("dynamic_image_size", STRING, "", "Input",
       "Image-size gears, for example \"224,224;448,448\".",
       ge_key="ge.dynamicImageSize", emit="nonempty",
       note="one compiled graph per gear under a Case root (docs/dynamic-shapes.md)"),
    _F("dynamic_dims", STRING, "", "Input", "ND dimension gears, for example \"1,2;3,4\".",
       ge_key="ge.dynamicDims", emit="nonempty",
       note="one compiled graph per gear under a Case root (docs/dynamic-shapes.md)"),
    _F("singleop", STRING, "", "Input", "JSON file describing single operators to compile.",
       note="one OM per op in the --output directory; shape_range/-1 ops build unknown-shape "
            "OMs; storage formats refused per op (EP0002)"),
    # ---------------------------------------------------------------- [Output]
    _F("output", STRING, "", "Output",
       "Output path prefix; .om (or .exeom for --mode=30, plus a .dbg file) is appended.",
       extra_help=("With --singleop it is the output directory.",)),
    _F("output_type", STRING, "", "Output",
       "Output data type: FP32, FP16, UINT8, INT8, ... or \"node:index:TYPE;...\".",
       ge_key="ge.outputDatatype", emit="nonempty", support=HONOURED,
       refuse=_refused_output_type, note="HIF8, HIF4, FP8E5M2, FP8E4M3FN are refused (EP0002)"),
    _F("check_report", STRING, "check_result.json", "Output",
       "Pre-check report file. Default: \"check_result.json\".", ge_key="check_report"),
    _F("json", STRING, "", "Output", "JSON file written by --mode=1 and --mode=5."),
    _F("host_env_os", STRING, "", "Output", "OS of the host that runs the model: linux or minios.",
       ge_key="ge.host_env_os"),
    _F("host_env_cpu", STRING, "", "Output",
       "CPU of the host that runs the model: x86_64, aarch64, arm64 or arm.",
       ge_key="ge.host_env_cpu"),
    # ---------------------------------------------------------------- [Target]
    _F("soc_version", STRING, "", "Target", "Target SoC name, for example Ascend310.",
       ge_key="ge.socVersion", note="validated against the known SoC table; keys the cache"),
    _F("virtual_type", INT, "0", "Target", "Allow running on virtual devices: 0 no, 1 yes.",
       choices=_ZERO_ONE, choice_code="E10001", ge_key="ge.virtual_type", support=NO_EFFECT),
    _F("core_type", STRING, "AiCore", "Target", "Core type: AiCore (default) or VectorCore.",
       choices=("AiCore", "VectorCore"), choice_code="E10001", ge_key="ge.engineType",
       support=NO_EFFECT),
    _F("aicore_num", STRING, "", "Target", "Number of cores used by operator compilation.",
       ge_key="ge.aicoreNum", support=NO_EFFECT),
    # ---------------------------------------------------------------- [Feature]
    _F("out_nodes", STRING, "", "Feature",
       "Output nodes of the model: \"node_name1:0;node_name2:1\".",
       ge_key="ge.outputNodeName"),
    _F("input_fp16_nodes", STRING, "", "Feature", "Inputs whose data type is FP16: \"a;b\".",
       ge_key="ge.INPUT_NODES_SET_FP16", emit="nonempty"),
    _F("insert_op_conf", STRING, "", "Feature", "Configuration file of inserted ops (AIPP).",
       ge_key="ge.insertOpFile", note="AIPP, docs/aipp.md"),
    _F("op_name_map", STRING, "", "Feature", "Operator type mapping file (Caffe extension ops).",
       ge_key="op_name_map", note="Caffe: CaffeType:NewType lines, e.g. "
       "DetectionOutput:SSDDetectionOutput"),
    _F("is_input_adjust_hw_layout", STRING, "", "Feature",
       "Per --input_fp16_nodes entry, true to use the NC1HWC0 layout.",
       ge_key="is_input_adjust_hw_layout",
       note="true: that fp16 input is [N, C1, H, W, 16]; needs a static 4-D input"),
    _F("is_output_adjust_hw_layout", STRING, "", "Feature",
       "Per --out_nodes entry, true to produce FP16 NC1HWC0 outputs.",
       ge_key="is_output_adjust_hw_layout",
       note="true: that output is fp16 [N, C1, H, W, 16]; needs --out_nodes"),
    _F("external_weight", STRING, "0", "Feature",
       "0 keep weights in the OM; 1 one file per Const; 2 one combined weight file.",
       choices=("0", "1", "2"), choice_code="E10006", ge_key="ge.externalWeight",
       note="FileConstant ops; files in weight/ beside the OM, docs/om.md"),
    # ---------------------------------------------------------------- [Model Tuning]
    _F("disable_reuse_memory", INT, "0", "Model Tuning", "1 disables memory reuse; 0 reuses.",
       choices=_ZERO_ONE, choice_code="E10006", ge_key="ge.exec.disableReuseMemory",
       support=NO_EFFECT),
    _F("fusion_switch_file", STRING, "", "Model Tuning", "File that switches fusion passes off.",
       ge_key="ge.fusionSwitchFile"),
    _F("enable_scope_fusion_passes", STRING, "", "Model Tuning",
       "Scope fusion passes to enable (TensorFlow parser).",
       ge_key="enable_scope_fusion_passes", support=NO_EFFECT,
       note="no scope fusion passes: the TF ops they would fuse are compiled one by one"),
    _F("enable_single_stream", STRING, "", "Model Tuning", "true to run on a single stream.",
       ge_key="ge.enableSingleStream", support=NO_EFFECT),
    _F("ac_parallel_enable", STRING, "0", "Model Tuning",
       "1 lets AI CPU ops of dynamic graphs run on parallel streams.",
       ge_key="ac_parallel_enable", support=NO_EFFECT),
    _F("tiling_schedule_optimize", STRING, "0", "Model Tuning", "1 enables tiling sinking.",
       ge_key="ge.tiling_schedule_optimize", support=NO_EFFECT),
    _F("quant_dumpable", STRING, "", "Model Tuning", "1 keeps quantised op data dumpable.",
       ge_key="ge.quant_dumpable", support=NO_EFFECT),
    _F("cluster_config", STRING, "", "Model Tuning", "Logical device table for HCCL tasks.",
       ge_key="ge.cluster_config", support=REFUSED, refuse=bool),
    _F("hccl_sub_comm_config", STRING, "", "Model Tuning", "HCCL sub-communicator file.",
       ge_key="ge.hccl_sub_comm_config", support=REFUSED, refuse=bool),
    _F("enable_small_channel", STRING, "0", "Model Tuning", "1 enables small-channel tuning.",
       ge_key="ge.enableSmallChannel", support=NO_EFFECT,
       note="a layout choice for the first convolution; the numbers do not change"),
    _F("enable_compress_weight", STRING, "false", "Model Tuning",
       "true compresses weights.", ge_key="ge.enableCompressWeight",
       to_option=_one_or_zero_if_true, support=REFUSED, refuse=lambda v: v == "true"),
    _F("compress_weight_conf", STRING, "", "Model Tuning",
       "File of the nodes whose weights are compressed.", ge_key="compress_weight_conf",
       support=REFUSED, refuse=bool),
    _F("compression_optimize_conf", STRING, "", "Model Tuning",
       "Compression (quantisation) configuration file.", ge_key="ge.compressionOptimizeConf",
       support=REFUSED, refuse=bool),
    _F("enable_attr_compression", STRING, "true", "Model Tuning",
       "true (default) compresses graph attributes in the OM.",
       ge_key="ge.enableAttrCompression", to_option=_lower, support=NO_EFFECT),
    _F("sparsity", INT, "0", "Model Tuning", "1 enables 2:4 structured sparsity.",
       choices=_ZERO_ONE, choice_code="E10006", ge_key="ge.enableSparseMatrixWeight",
       support=REFUSED, refuse=_non_default("0")),
    _F("buffer_optimize", STRING, "l2_optimize", "Model Tuning",
       "Buffer optimisation: l1_optimize, l2_optimize (default) or off_optimize.",
       choices=("l1_optimize", "l2_optimize", "off_optimize"), choice_code="E10001",
       ge_key="ge.bufferOptimize", support=NO_EFFECT),
    _F("mdl_bank_path", STRING, "", "Model Tuning", "Subgraph tuning knowledge bank path.",
       ge_key="ge.mdl_bank_path", support=NO_EFFECT),
    _F("oo_level", STRING, "O3", "Model Tuning", "Graph optimisation level: O1 or O3 (default).",
       ge_key="ge.oo.level"),
    _F("oo_constant_folding", STRING, "false", "Model Tuning",
       "true or false: switch constant folding.", ge_key="ge.oo.constantFolding",
       emit="explicit", registered=True),
    _F("oo_dead_code_elimination", STRING, "false", "Model Tuning",
       "true or false: switch dead code elimination.", ge_key="ge.oo.deadCodeElimination",
       emit="explicit", registered=True),
    _F("topo_sorting_mode", STRING, "false", "Model Tuning",
       "Topological order: 0 BFS, 1 DFS, 2 RDFS, 3 StableRDFS.", ge_key="ge.topoSortingMode",
       emit="explicit", registered=True, support=NO_EFFECT),
    _F("multi_stream_parallel_mode", STRING, "false", "Model Tuning",
       "Multi-stream strategy: cv, LoadBalance:N or MainStream:N.",
       ge_key="ge.autoMultistreamParallelMode", emit="explicit", registered=True,
       support=NO_EFFECT),
    # ---------------------------------------------------------------- [Operator Tuning]
    _F("op_precision_mode", STRING, "", "Operator Tuning", "Per-op precision mode .ini file.",
       ge_key="ge.exec.op_precision_mode",
       note="chooses the high-precision kernel variants (docs/precision.md)"),
    _F("allow_hf32", STRING, "", "Operator Tuning", "true or false: allow HF32 (reserved).",
       ge_key="ge.exec.allow_hf32", support=NO_EFFECT,
       note="HF32 rounds float32 matmul/conv inputs on the device; host kernels stay float32"),
    _F("precision_mode", STRING, "", "Operator Tuning",
       "Network precision mode: force_fp16 (default), must_keep_origin_dtype, ...",
       choices=_PRECISION, choice_code="E10001", ge_key="ge.exec.precision_mode",
       note="dtype-assignment stage (docs/precision.md); default force_fp16"),
    _F("precision_mode_v2", STRING, "", "Operator Tuning",
       "Precision mode, new vocabulary: fp16 (default), origin, mixed_float16, ...",
       choices=_PRECISION_V2, choice_code="E10001", ge_key="ge.exec.precision_mode_v2",
       note="cube_hif8 and mixed_hif8 are refused (EP0002)"),
    _F("modify_mixlist", STRING, "", "Operator Tuning",
       "JSON file adjusting mixed-precision lists.",
       ge_key="ge.exec.modify_mixlist"),
    _F("keep_dtype", STRING, "", "Operator Tuning", "File of ops that keep their original dtype.",
       ge_key="keep_dtype"),
    _F("customize_dtypes", STRING, "", "Operator Tuning", "File of per-op custom dtypes.",
       ge_key="ge.customizeDtypes"),
    _F("is_weight_clip", STRING, "1", "Operator Tuning", "1 (default) clips float weights.",
       ge_key="ge.is_weight_clip",
       note="float16 weights saturate at +-65504 instead of overflowing to inf"),
    _F("op_bank_path", STRING, "", "Operator Tuning", "Operator tuning knowledge bank path.",
       ge_key="ge.op_bank_path", support=NO_EFFECT),
    _F("jit_compile", STRING, "1", "Operator Tuning",
       "0 prefer prebuilt binaries; 1 (default) compile online; 2 online for static shapes.",
       choices=("0", "1", "2"), choice_code="E10001", ge_key="ge.jit_compile",
       support=NO_EFFECT),
    _F("optimization_switch", STRING, "", "Operator Tuning",
       "Pass switches: \"PassName1:on;PassName2:off\".", ge_key="ge.optimizationSwitch"),
    _F("static_model_ops_lower_limit", STRING, "", "Operator Tuning",
       "Smallest op count of a static subgraph, in [-1, 9223372036854775807].",
       ge_key="ge.exec.static_model_ops_lower_limit", emit="nonempty", support=NO_EFFECT),
    _F("h2d_overlapped_with_compute", STRING, "", "Operator Tuning",
       "0, 1 or ascending boundaries: overlap input copies with compute.",
       ge_key="ge.compile.h2dOverlappedWithCompute", name_table=False, emit="nonempty",
       support=NO_EFFECT),
    _F("op_select_implmode", STRING, "", "Operator Tuning",
       "(Deprecated) implementation mode: high_performance (default) or high_precision[...].",
       choices=_IMPLMODE, choice_code="E10001", ge_key="ge.opSelectImplmode",
       to_option=_implmode_default,
       note="chooses the high-precision kernel variants (docs/precision.md)"),
    _F("optypelist_for_implmode", STRING, "", "Operator Tuning",
       "Op types that --op_select_implmode applies to: \"OpType1,OpType2\".",
       ge_key="ge.optypelistForImplmode"),
    # ---------------------------------------------------------------- [Debug]
    _F("op_debug_level", INT, "0", "Debug",
       "Operator debug level 0 (off) to 4; non-zero keeps kernel files and skips the cache.",
       choices=("0", "1", "2", "3", "4"), choice_code="E10001", ge_key="ge.opDebugLevel"),
    _F("save_original_model", STRING, "", "Debug",
       "true also saves the model before optimisation as <output>_original.om.",
       ge_key="ge.saveOriginalModel", emit="nonempty", support=REFUSED,
       refuse=lambda v: v == "true"),
    _F("log", STRING, "null", "Debug", "Log level: debug, info, warning, error or null (default).",
       choices=("debug", "info", "warning", "error", "null"), choice_code="E10010",
       ge_key="log"),
    _F("dump_mode", STRING, "0", "Debug",
       "With --mode=1 and --framework: 1 dumps the parsed graph with inferred shapes.",
       choices=_ZERO_ONE, choice_code="E10006", ge_key="dump_mode"),
    _F("debug_dir", STRING, "", "Debug",
       "Directory of operator debug files. Default: ./kernel_meta",
       ge_key="ge.debugDir"),
    _F("status_check", STRING, "0", "Debug", "1 inserts overflow checks.",
       choices=_ZERO_ONE, choice_code="E10006", ge_key="ge.status_check",
       to_option=_true_if_one, support=NO_EFFECT),
    _F("op_compiler_cache_dir", STRING, "", "Debug",
       "Operator compile cache root. Default: $HOME/atc_data", ge_key="ge.op_compiler_cache_dir"),
    _F("op_compiler_cache_mode", STRING, "enable", "Debug",
       "Operator compile cache: enable (default), disable or force.",
       choices=("enable", "disable", "force"), choice_code="E10001",
       ge_key="ge.op_compiler_cache_mode", note="default enable (seed 002)"),
    _F("display_model_info", STRING, "0", "Debug", "1 prints the model information after building.",
       choices=_ZERO_ONE, choice_code="E10006", ge_key="ge.display_model_info"),
    _F("build_config", STRING, "", "Debug", "Build command template for generated sources.",
       ge_key="ge.buildConfig", emit="nonempty", support=NO_EFFECT),
    _F("shape_generalized_build_mode", STRING, "shape_precise", "Debug",
       "(Deprecated) shape_generalized or shape_precise (default).",
       choices=("shape_generalized", "shape_precise"), choice_code="E10001",
       ge_key="ge.shape_generalized_build_mode", support=NO_EFFECT),
    _F("op_debug_config", STRING, "", "Debug", "Operator debug configuration file.",
       ge_key="op_debug_config"),
    _F("atomic_clean_policy", STRING, "0", "Debug",
       "0 (default) cleans memory centrally; 1 cleans per op.",
       choices=_ZERO_ONE, choice_code="E10006", ge_key="ge.exec.atomicCleanPolicy",
       support=NO_EFFECT),
    _F("deterministic", STRING, "0", "Debug", "1 enables deterministic computation.",
       choices=_ZERO_ONE, choice_code="E10006", ge_key="ge.deterministic"),
    _F("deterministic_level", STRING, "0", "Debug",
       "Deterministic level 0 to 3 (2 strong, 3 batch consistency).",
       choices=("0", "1", "2", "3"), choice_code="E10001", ge_key="ge.deterministicLevel",
       emit="explicit"),
    _F("export_compile_stat", STRING, "false", "Debug",
       "Fusion statistics file: 0 none, 1 at exit (default), 2 after compiling.",
       ge_key="ge.exportCompileStat", emit="explicit", registered=True),
    # ---------------------------------------------------------------- not shown in help
    _F("target", STRING, "", HIDDEN, "Legacy parser target.", ge_key="target",
       support=NO_EFFECT),
    _F("cal_conf", STRING, "", HIDDEN, "Calibration configuration file.",
       ge_key="ge.calibrationConfFile", support=REFUSED, refuse=bool),
    _F("auto_tune_mode", STRING, "", HIDDEN, "Removed Auto Tune feature; must stay empty.",
       ge_key="ge.autoTuneMode", emit="nonempty", note="non-empty fails with E10001"),
    _F("device_id", STRING, "0", HIDDEN, "Device ids used for tuning.",
       ge_key="ge.exec.tuneDeviceIds", support=NO_EFFECT),
)

BY_NAME: dict[str, Flag] = {f.name: f for f in FLAGS}
assert len(BY_NAME) == len(FLAGS), "duplicate flag name"


def flag(name: str) -> Flag:
    return BY_NAME[name]


def refused_value(f: Flag, value: str) -> bool:
    """Whether `value` of flag `f` asks for something this implementation refuses."""
    return f.refuse is not None and bool(f.refuse(value))
