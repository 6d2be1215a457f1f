"""The one table of ATC error and warning codes (spec/atc-cli.md §7.6, decisions table).

Each entry gives the code, its title (ATC's `errTitle`), a message template with named
`{placeholders}`, and optional cause / solution lines.  CANN's codes keep CANN's titles and
headline templates; the explanatory texts are our own words.  Our own codes use the prefix
`EP` (errors) and `WP` (warnings).  Lower layers raise `ge.errors.GeError(code, params)` with
exactly the template's placeholders as `params` (tests/test_code_sites.py checks every raise
site); this table is the only text of a message.  Where our raise site knows more than a CANN
headline says (the reason a model failed to load, say), the entry's `detail` holds it: the
headline stays CANN's and the error report prints the detail as a TraceBack line.
"""
from __future__ import annotations

from collections import namedtuple
from string import Formatter

__all__ = ["Code", "CODES", "lookup", "placeholders", "format_parts", "format_message",
           "is_internal"]


# One code (a namedtuple: the table is read by every run, and dataclasses cost an import):
#   code, title (ATC's errTitle), template (with {placeholders}), cause, solution, ours (defined
#   by this implementation, not by CANN), detail (our text after a CANN headline, with
#   placeholders of its own).
Code = namedtuple("Code", "code title template cause solution ours detail",
                  defaults=("", "", False, ""))


_SET_VALID = "Set a valid parameter value."

CODES: tuple[Code, ...] = (
    # ---- CANN argument errors (E10xxx) --------------------------------------------------
    Code("E10001", "Invalid_Argument",
         "Value {value} for parameter {parameter} is invalid. Reason: {reason}"),
    Code("E10002", "Invalid_Argument_Tensor_Input_Shape",
         "Value {value} for parameter --input_shape is invalid. Reason: {reason}. "
         "The value must be formatted as {format}.",
         solution="Write every input as name:d0,d1,... and separate inputs with ';'."),
    Code("E10003", "Invalid_Argument",
         "Value {value} for parameter --{parameter} is invalid. Reason: {reason}"),
    Code("E10004", "Invalid_Argument", "Value for --{parameter} is empty.",
         solution=_SET_VALID),
    Code("E10005", "Invalid_Argument",
         "Value {value} for parameter --{parameter} is invalid. "
         "The value must be either true or false.",
         solution=_SET_VALID + " The parameter value can only be true or false."),
    Code("E10006", "Invalid_Argument",
         "Value {value} for parameter --{parameter} is invalid. The value must be either 1 or 0.",
         solution=_SET_VALID + " The parameter value can only be 1 or 0."),
    Code("E10007", "Invalid_Argument", "--{parameter} is required. The value must be {support}.",
         solution=_SET_VALID),
    Code("E10008", "Invalid_Argument",
         "--weight must not be empty when --framework is set to 0 (Caffe).",
         solution="Pass the .caffemodel file with --weight."),
    Code("E10009", "Invalid_Argument_Tensor_Dynamic_Shape",
         "--dynamic_batch_size, --dynamic_image_size, --input_shape_range, and --dynamic_dims "
         "are mutually exclusive.",
         solution="Keep only one of these options on the command line."),
    Code("E10010", "Invalid_Argument", "Value {value} for parameter --log is invalid.",
         solution="Select the value from debug, info, warning, error, and null."),
    Code("E10011", "Invalid_Argument_Tensor_Input_Shape",
         "Value {value} for parameter --input_shape is invalid. Shape values must be positive "
         "integers. The error value in the shape is {dim}.",
         solution="Give every static dimension as an integer greater than 0."),
    Code("E10013", "Invalid_Argument", "Value {value} for --{parameter} is out of range.",
         solution="Use a value that fits the integer type of the parameter."),
    Code("E10014", "Invalid_Argument", "Value {value} for parameter --{parameter} is invalid.",
         solution="Check the syntax of the value."),
    Code("E10016", "Invalid_Argument_Operator_Name",
         "Op name {opname} specified in --{parameter} is not found in the model. Confirm "
         "whether this node name exists, or whether the node is not split with the specified "
         "delimiter ';'.",
         solution="Specify the name of an existing node in the graph."),
    Code("E10017", "Invalid_Argument",
         "Input Op {opname} specified in --{parameter} is invalid. The Op type must be Data."),
    Code("E10021", "Invalid_Argument",
         "Path for parameter --{parameter} is too long. Keep the length within {length}.",
         solution="Use a shorter path."),
    Code("E10022", "Invalid_Argument",
         "Path {path} for parameter --{parameter} does not include the file name.",
         solution="Add the file name to the path."),
    Code("E10023", "Invalid_Argument", "Value {value} for parameter --singleop is invalid.",
         cause="No file exists at the path given.",
         solution="Give the path of an existing op-list JSON file."),
    Code("E10024", "Invalid_Argument", "Failed to open file {value} specified by --singleop.",
         solution="Make the file readable by the user running ATC.",
         detail="Reason: {reason}."),
    Code("E10025", "Invalid_Argument",
         "File {realpath} specified by --singleop is not a valid JSON file. Reason: {errmsg}.",
         solution="Fix the JSON syntax at the position the reason names."),
    Code("E10026", "Invalid_Argument",
         "The Op name is empty in the file specified by --singleop.",
         solution="Give every entry of the op list its op type in the field \"op\".",
         detail="{where}"),
    Code("E10027", "Invalid_Argument",
         "Attribute {attr} of {input_output} tensor {index} for Op {op_name} is invalid when "
         "--singleop is specified.",
         solution="Use a data type and format name from the list in docs/atc.md.",
         detail="{where}"),
    Code("E10029", "Invalid_Argument",
         "Attribute name of Op {op_name} is empty in the file specified by --singleop.",
         solution="Give every attribute of the op a name.", detail="{where}"),
    Code("E10030", "Invalid_Argument",
         "There is an invalid value for attribute name {attrname} of Op {op_name} in the file "
         "specified by --singleop.",
         solution="Give the attribute a type from the list in docs/atc.md and a value of "
                  "that type.",
         detail="{reason}"),
    Code("E10032", "File_Operation_Error_Parse",
         "Failed to parse JSON file {file}. Reason: {reason}.",
         solution="Fix the JSON file so that it follows the documented layout."),
    Code("E10040", "Invalid_Argument_Tensor_Dynamic_Shape",
         "Value {value} for parameter --input_shape is invalid. Reason: '~' ranges cannot be "
         "combined with {parameter}.",
         solution="Use -1 for gear dimensions when a gear option is set."),
    Code("E10041", "Invalid_Argument_Model", "Failed to load the model from {file}.",
         solution="Check that the file is a model of the selected kind.",
         detail="Reason: {reason}."),
    Code("E10047", "Invalid_Argument", "--{parameter1} and --{parameter2} are mutually exclusive.",
         solution="Remove either of them and try again."),
    Code("E10048", "Invalid_Argument",
         "Value {value} for parameter --input_shape_range or dynamic_inputs_shape_range is "
         "invalid. Reason: {reason}. The value must be formatted as {format}.",
         solution="Write ranges as lo~hi with non-negative integers."),
    Code("E10049", "Invalid_Argument_Tensor_Input_Shape",
         "Dimension count {shape_range_size} configured in --input_shape does not match "
         "dimension count {cur_dim_size} of the node.",
         solution="Give as many dimensions as the model input has."),
    Code("E10050", "Invalid_Argument_Tensor_Input_Shape_Range",
         "Current dimension size {cur_dim} is not in the range of {shape_range_left}-"
         "{shape_range_right} specified by --input_shape.",
         solution="Give a range that holds the model's own size of that dimension."),
    Code("E10034", "Invalid_Argument",
         "Nodes (for example, {opname}) connected to AIPP must not be of type FP16.",
         solution="Remove the input from --input_fp16_nodes, or drop --insert_op_conf."),
    Code("E10052", "Invalid_Argument", "AIPP configuration is invalid. Reason: {reason}.",
         solution="Correct the field named in the reason (docs/aipp.md lists every rule)."),
    Code("E10054", "Invalid_Argument",
         "The required parameter {parameter} for ATC is empty. Another possible reason is that "
         "the values of some parameters are not enclosed by quotation marks (\"\").",
         solution="Check whether the command line parameter format is correct."),
    Code("E10055", "Not_Supported", "The operation is not supported. Reason: {reason}.",
         solution="Check whether the configured parameter or used function is supported."),
    Code("E10056", "Invalid_Argument",
         "Cannot configure both parameters {parameter1} and {parameter2} simultaneously.",
         solution="Keep only one of the two precision options."),
    Code("E10057", "Invalid_Argument",
         "--{parameter1} and --{parameter2} can only be used together.",
         solution="Run --mode=6 with --om only."),
    # ---- CANN gear (multi-batch) errors, raised by ge.compiler.gear_options ------------
    Code("E10012", "Invalid_Argument_Tensor_Input_Shape",
         "--dynamic_batch_size is included, but the dimension count of the dynamic-shape "
         "input configured in --input_shape is less than 1.",
         solution="Give every input listed in --input_shape at least one dimension."),
    Code("E10018", "Invalid_Argument_Tensor_Dynamic_Shape",
         "Value {shape} for shape {index} is invalid. When --dynamic_batch_size is included, "
         "only batch size N can be -1 in --input_shape.",
         solution="Write -1 only in the first (batch) dimension of the inputs."),
    Code("E10019", "Invalid_Argument_Tensor_Input_Shape",
         "When --dynamic_image_size is included, only the height and width axes can be -1 in "
         "--input_shape.",
         solution="Write -1 in exactly the H and W dimensions of a 4-D NCHW or NHWC input."),
    Code("E10020", "Invalid_Argument",
         "Value {dynamic_image_size} for parameter --dynamic_image_size is invalid.",
         solution='Write every profile as two numbers, "h1,w1;h2,w2".'),
    Code("E10031", "Invalid_Argument_Tensor_Input_Shape",
         "--dynamic_batch_size is included, but none of the nodes specified in --input_shape "
         "has a batch size equaling -1.",
         solution="Write -1 as the batch dimension of the inputs whose batch varies."),
    Code("E10035", "Invalid_Argument_Tensor_Dynamic_Shape",
         "--dynamic_batch_size, --dynamic_image_size, or --dynamic_dims has {shapesize} "
         "profiles, which is less than the minimum {minshapesize}.",
         solution="Give at least two profiles."),
    Code("E10036", "Invalid_Argument_Tensor_Dynamic_Shape",
         "--dynamic_batch_size, --dynamic_image_size, or --dynamic_dims has {shapesize} "
         "profiles, which is greater than the maximum {maxshapesize}.",
         solution="Give at most the maximum number of profiles."),
    Code("E10038", "Invalid_Argument_Tensor_Dynamic_Shape",
         "Dimension size {dim} is invalid. The value must be greater than 0.",
         solution="Use positive values in every profile."),
    Code("E10039", "Invalid_Argument_Tensor_Dynamic_Shape",
         "The --dynamic_batch_size, --dynamic_image_size, or --dynamic_dims argument has "
         "duplicate profiles.",
         solution="List every profile once."),
    Code("E10058", "Invalid_Argument", "Parameter {parameter} is not configured or is empty.",
         solution="Give the option a value."),
    Code("E10501", "Invalid_Argument_Model",
         "IR for Op {opname} with optype {optype} is not registered.",
         solution="Check the operator support list of this implementation."),
    # ---- CANN parser errors (E11xxx Caffe family, E16xxx ONNX) ---------------------------
    Code("E11010", "Invalid_Model", "Failed to convert Op {opname} (optype {optype}) to GE IR.",
         solution="Check the operator's attributes and inputs in the source model.",
         detail="Reason: {reason}."),
    Code("E12009", "Invalid_Argument_TensorFlow_Model_Data",
         "Input {opname} for Op {inputopname} is not found in graph_def.",
         cause="A node of the TensorFlow graph reads a node the graph does not contain.",
         solution="Try again with a valid TensorFlow model."),
    Code("E12013", "Invalid_Argument_TensorFlow_Model_Data",
         "Failed to find a subgraph by the name {functionname}.",
         solution="Freeze the model again so that its function library holds every function "
                  "an If or While node names."),
    Code("E12029", "Invalid_Argument_TensorFlow_Model_Data",
         "Failed to find the subgraph library.",
         cause="An If or While node names a function but the GraphDef has no function library.",
         solution="Freeze the model again with its function library."),
    Code("E11001", "Invalid_Argument_Caffe_Model_Data",
         "input_dim and input_shape are mutually exclusive in NetParameter for Caffe model "
         "conversion.", solution="Keep either input_dim or input_shape in the prototxt."),
    Code("E11003", "Invalid_Argument_Caffe_Model_Data",
         "The number of input_dim fields in the model is {input_dim_size}, which is not 4x the "
         "input count {input_size}.", solution="Give four input_dim values per input."),
    Code("E11004", "Invalid_Argument_Caffe_Model_Data",
         "The number of input shapes is {input_shape_size}, which does not match the number of "
         "inputs {input_size}.", solution="Give one input_shape per input."),
    Code("E11005", "Invalid_Argument_Tensor_Input_Shape",
         "The shape is not defined by using --input_shape for input {input}.",
         solution="Give the input's shape in the prototxt or with --input_shape."),
    Code("E11008", "Invalid_Argument_Caffe_Model_Data", "Op type DetectionOutput is unsupported.",
         solution="Rename the layer type to SSDDetectionOutput in the prototxt, or map it with "
                  "--op_name_map (DetectionOutput:SSDDetectionOutput)."),
    Code("E11009", "Not_Supported_Operator",
         "No Caffe parser is registered for Op {opname} with Op type {optype}.",
         solution="Replace the layer, or map its type with --op_name_map to a supported one.",
         detail="Unsupported layers (all of them): {layers}.\nTo add an operator yourself, "
                "write a custom operator package: see docs/custom-ops.md."),
    Code("E11012", "Invalid_Argument_Caffe_Model_Data",
         "Unknown bottom blob {bottom_blob} at layer {layer}. The bottom blob is indexed "
         "{bottom_index}.", solution="Make every bottom the top of an earlier layer or input."),
    Code("E11016", "Invalid_Argument",
         "Failed to add Op {opname} to NetOutput. Op output index {outputindex} is not less "
         "than {totlaloutputindex}. NetOutput input_index {inputindex} is not less than "
         "{totlalinputindex}.", solution="Try again with a valid --out_nodes argument."),
    Code("E11017", "Invalid_Argument", "Failed to find node {opname} specified by --out_nodes.",
         solution="Try again with a valid --out_nodes argument."),
    Code("E11018", "Invalid_Argument_Caffe_Model_Data",
         "Op name {opname} contains invalid characters.",
         solution="Use only letters, digits, '-', '.', '_' and '/' in layer names."),
    Code("E11022", "Invalid_Argument_Caffe_Model_Data", "Invalid prototxt file.",
         cause="No layer structures are found in the Caffe model.",
         solution="Check that --model is the network description (.prototxt)."),
    Code("E11024", "Invalid_Argument_Caffe_Model_Data", "Invalid Caffe weight file.",
         cause="No layer structures are found in the Caffe weight file.",
         solution="Check that --weight is the trained .caffemodel of the network."),
    Code("E11027", "Invalid_Argument_Caffe_Model_Data",
         "Op {opname} with optype {optype} in the Caffe model has an input node with shape "
         "size 0.", solution="Give every input dimension a positive size."),
    Code("E11029", "Invalid_Argument_Caffe_Model_Data",
         "Op {opname} exists in the model file but is not found in weight file.",
         solution="Try again with a valid Caffe model or weight file. Ensure that the two files "
                  "match with each other."),
    Code("E11033", "Invalid_Argument_Caffe_Model_Weight",
         "Failed to convert the weight file. Blob {blob} of size {size} is invalid. "
         "Reason: {reason}.",
         solution="Try again with a valid Caffe model or weight file. Ensure that the two files "
                  "match with each other."),
    Code("E11035", "Invalid_Argument_Caffe_Model_Data",
         "The top size of data node {opname} is not 1 but {size}.",
         solution="Give the input layer exactly one top."),
    Code("E11036", "Invalid_Argument_Caffe_Model_Data",
         "Data nodes have duplicate top blobs {topname}.",
         solution="Give every input a unique top name."),
    Code("E11037", "Invalid_Argument_Caffe_Model_Data", "Op {opname} has zero outputs.",
         solution="Nodes in the Caffe model must have at least one output."),
    Code("E16001", "Invalid_Model_Onnx", "The model has no {type} node.",
         solution="Export the model with its graph inputs and outputs."),
    Code("E16004", "Invalid_Model_Onnx", "ONNX model has no graph.",
         solution="Export the model again."),
    # ---- CANN file / environment errors (E13xxx) -----------------------------------------
    Code("E13001", "File_Operation_Error_Open", "Failed to open file {file}. Reason: {reason}."),
    Code("E13004", "File_Operation_Error_Write", "Failed to write file {file}. Reason: {reason}.",
         solution="Check the permissions and the free space of the target directory."),
    Code("E13005", "File_Operation_Error_Parse", "Failed to parse file {file}.",
         solution="Write the file in the protobuf text format of its schema.",
         detail="Reason: {reason}."),
    Code("E13010", "Invalid_Model_Operator_Not_Supported",
         "No operator plugin is registered for Op: {opname}, optype: {optype}.",
         solution="Replace the operator, or use an opset this implementation supports.",
         detail="Unsupported operators (all of them): {nodes}.{opsets}\nTo add an operator "
                "yourself, write a custom operator package: see docs/custom-ops.md."),
    Code("E13014", "Invalid_Argument",
         "Value {value} of parameter {parameter} for Op {opname} is invalid. Reason: {reason}.",
         solution="Correct the op's description in the op list (for dynamic AIPP: give the "
                  "input the NCHW or NHWC format)."),
    Code("E13028", "Compilation_Error_Execute_Custom_Fusion_Pass",
         "Failed to run custom fusion pass {passname}. Return code: {retcode}. "
         "Reason: {reason}.",
         solution="Fix the pass named in the message; its file and line are in the reason."),
    Code("E13029", "Compilation_Error_Load_Custom_Fusion_Pass",
         "Failed to load custom fusion pass lib {passlibname}. Reason: {reason}.",
         solution="Fix the plugin module or remove it from ASCEND_GE_PY_PASS_PATH."),
    Code("E13026", "File_Operation_Error_Invalid_Path",
         "Input path {path} is invalid. Reason: {reason}"),
    # ---- internal ----------------------------------------------------------------------
    Code("E19005", "File_Operation_Error_Parse", "Failed to parse file {file}.",
         solution="Check that the file is of the kind the option expects.",
         detail="Reason: {reason}."),
    Code("E19999", "Inner_Error", "Unknown error occurred. Please check the log.",
         solution="Send the log file named on the screen to the maintainers.",
         detail="{reason}"),
    Code("EZ9999", "Inner_Error", "Internal error at {what}: {reason}.",
         solution="Send the log file to the maintainers."),
    Code("EZ3003", "Operator_Not_Supported",
         "No supported engine found for op {opname} ({optype}). Reason: {reason}.",
         solution="Check the engine exclusion options and the operator support list."),
    # ---- our own errors (EPxxxx) -------------------------------------------------------
    Code("EP0002", "Not_Supported",
         "{feature} is not supported by this implementation. Reason: {reason}.",
         solution="Leave the option out, or set it to its default value.",
         ours=True),
    Code("EP0003", "Pre_Check_Failed",
         "The pre-check found unsupported or invalid operators; see the report {file}.",
         solution="Fix the operators listed as failed in the report.", ours=True),
    Code("EP0004", "Interrupted", "The run was interrupted by {signal}.",
         cause="The process received Ctrl-C (SIGINT) or a termination request (SIGTERM) before "
               "the run finished; no partial output was left behind.",
         solution="Run the command again to get its result.", ours=True),
    Code("EP0005", "Graph_Invariant_Broken",
         "Graph {graph}: {where} breaks an IR invariant: {reason}.",
         cause="A compiler stage or graph edit left the graph malformed (an edge recorded on "
               "one end only, a cycle, a required input or a graph output not connected).",
         solution="Send the log file to the maintainers: this is a compiler defect.",
         ours=True),
    Code("EP0006", "Output_Stream_Error",
         "Cannot write the requested output to {stream}: {reason}.",
         solution="Run the command with that stream open on a terminal, a file or a pipe "
                  "that is read to the end.", ours=True),
    Code("EP0101", "Invalid_Model_Onnx", "The ONNX model {model} is invalid. Reason: {reason}.",
         solution="Check the model with onnx.checker.", ours=True),
    Code("EP0501", "Invalid_Model_TensorFlow",
         "The TensorFlow graph is invalid. Reason: {reason}.",
         solution="Freeze the model again with TensorFlow and check it loads there.", ours=True),
    Code("EP0502", "TensorFlow_Model_Not_Frozen",
         "The TensorFlow graph is not frozen: it reads variables ({nodes}).",
         solution="Freeze it first, e.g. with convert_variables_to_constants_v2, so that every "
                  "variable becomes a Const.", ours=True),
    Code("EP0503", "TensorFlow_Control_Flow_Not_Supported",
         "Control flow node {opname} ({optype}) cannot be compiled. Reason: {reason}.",
         solution="Give the inputs that decide the branch or the trip count as constants, or "
                  "use tf.cond (If) for data-dependent branches.", ours=True),
    Code("EP0504", "Reference_Not_Installed",
         "{package} is needed for {what} but it is not installed.",
         solution="Install it (pip install tensorflow-cpu) or compare with another reference.",
         ours=True),
    Code("EP0110", "Kernel_Build_Error", "Failed to build kernel {kernel}. Reason: {reason}",
         solution="Install the system C compiler (cc) and the libraries named in the reason.",
         ours=True),
    Code("EP0111", "Unsafe_Cache_Directory",
         "The kernel cache directory {path} is refused: {reason}. Cached kernels are native "
         "code, so the cache's own directories must be real directories of yours that group "
         "and others cannot write.",
         solution="Fix the directory (chmod go-w; replace a symbolic link by the directory it "
                  "points to), or choose another --op_compiler_cache_dir.",
         ours=True),
    Code("EP0112", "Kernel_Load_Error",
         "Kernel {kernel} of op {opname} failed its integrity or ABI check: {reason}.",
         solution="Recompile with --op_compiler_cache_mode=force.", ours=True),
    Code("EP0113", "Blas_Not_Installed",
         "Kernels need the Python package {package} (OpenBLAS), but {reason}.",
         solution="Install it into the Python that runs pyatc: pip install scipy-openblas32.",
         ours=True),
    Code("EP0114", "C_Compiler_Not_Found",
         "Kernel compilation needs a C compiler ({compiler}), which is not on PATH. "
         "Install one with: {install}",
         solution="Install a C compiler, or put the one you have on PATH as cc.", ours=True),
    Code("EP0115", "Kernel_Cache_Check_Failed", "Kernel cache {path} failed the check: {reason}.",
         solution="Run python3 -m ge.compiler.cache verify --fix to remove bad entries; fix "
                  "the permissions of what cannot be read.", ours=True),
    Code("EP0120", "Remote_Cache_Error", "Remote kernel cache {store}: {reason}.",
         solution="Check the remote_storage setting, the server and the signing key "
                  "(docs/cache.md, Remote storage).", ours=True),
    Code("EP0130", "Invalid_Recurrent_Op",
         "Recurrent op {opname} ({optype}) is invalid: {reason}.",
         cause="The attributes of an LSTM / GRU / RNN layer, the shapes of its inputs or its "
               "constant sequence lengths do not fit together.",
         solution="Fix the layer in the source model (hidden_size, direction, activations, "
                  "W/R/B/initial state shapes, sequence_lens).", ours=True),
    Code("EP0140", "Invalid_Quantization_Parameter",
         "Op {opname} ({optype}) has an invalid quantization parameter {param}: {reason}.",
         solution="Fix the scale, zero point or axis in the source model (scales must be "
                  "finite and non-zero, zero points of the quantized type).", ours=True),
    Code("EP0150", "Shape_Value_Unknown",
         "Op {opname} ({optype}) needs the value of its input {input} at compile time to infer "
         "its output shape, but that value stayed unknown: it comes from {source}.",
         cause="Only values computable when the model is compiled (constants, the shapes of "
               "statically shaped tensors and shape arithmetic on them) can be folded.",
         solution="Give every graph input static dims with --input_shape, or make the value a "
                  "constant in the model.", ours=True),
    Code("EP0151", "Shape_Rank_Unknown",
         "Op {opname} ({optype}) needs the rank of its input {input} at compile time, but "
         "that rank stayed unknown: it comes from {source}.",
         cause="An If whose branches give tensors of different ranks has an output of unknown "
               "rank unless its condition is known when the model is compiled.",
         solution="Give every graph input static dims with --input_shape, so that the "
                  "condition folds and the If is replaced by the branch it takes.", ours=True),
    Code("EP0200", "Runtime_No_Matching_Gear",
         "The input shapes {shapes} match no gear of model {model}; its gears are {gears}.",
         cause="A model compiled with --dynamic_batch_size, --dynamic_image_size or "
               "--dynamic_dims runs only at the shapes of its gears.",
         solution="Pad or split the input to one of the gears, or recompile with that gear.",
         ours=True),
    Code("EP0201", "Runtime_Invalid_Gear_Option",
         "Value {value} for {option} is invalid. Reason: {reason}.",
         solution='Write --dymBatch N, --dymHW H,W or --dymDims "x:1,16;y:1,16" with the '
                  "values of one of the model's gears.", ours=True),
    Code("EP0301", "Om_Write_Error", "Cannot build the OM. Reason: {reason}.", ours=True),
    Code("EP0310", "External_Weight_Invalid",
         "Weight file {file} of the model {model} cannot be used: {reason}.",
         solution="Keep the weight directory that was written beside the OM with it, or "
                  "compile the model again.", ours=True),
    Code("EP0320", "Runtime_Invalid_Threads",
         "Invalid thread count {value} ({source}): {reason}.",
         solution="Give a whole number of threads from 1 to the number of CPUs this process "
                  "may use, or leave it out for the default (the physical cores).", ours=True),
    Code("EP0401", "Runtime_Target_Mismatch",
         "The OM {file} was not built for this host ({host}): {reason}.",
         solution="Compile the model on this kind of host with pyatc.", ours=True),
    Code("EP0402", "Runtime_Unsupported_Op", "The runtime cannot execute {what}: {reason}.",
         ours=True),
    Code("EP0220", "Runtime_Shape_Out_Of_Range",
         "Input {input} has shape {shape}; dim {dim} must be in {allowed}, the range the "
         "unknown-shape model was compiled for ({ranges}). Nothing was computed.",
         solution="Feed a shape inside the ranges, or compile with wider --input_shape ranges.",
         ours=True),
    Code("EP0403", "Runtime_Invalid_Input", "Invalid model input: {reason}.", ours=True),
    Code("EP0404", "Runtime_Invalid_Memory_Plan",
         "The memory plan of model {file} is invalid: {reason}.", ours=True),
    Code("EP0405", "Runtime_Kernel_Failed", "Op {opname} ({optype}) failed: {reason}.",
         ours=True),
    Code("EP0406", "Runtime_Kernel_Mismatch",
         "Op {opname} ({optype}) does not match its kernel {kernel}: {reason}.",
         cause="The model definition was edited after the kernel was compiled (the kernel "
               "declares the shapes, dtypes and workspace it was built for).",
         solution="Recompile the model with ATC; do not edit an OM's model definition.",
         ours=True),
    Code("EP0601", "Caffe_Compare_Unavailable",
         "The Caffe reference cannot run: {reason}.",
         solution="Install the test extra (opencv-python-headless<5), which has OpenCV's "
                  "Caffe importer.", ours=True),
    Code("EP0700", "Single_Op_Build_Failed",
         "{failed} of the {total} ops in {file} failed to compile: {ops}.",
         cause="The other ops of the list were compiled and written; each failed op's own "
               "error follows.",
         solution="Fix or remove the ops named, then run the list again.", ours=True,
         detail="{reasons}"),
    # ---- custom operator packages (docs/custom-ops.md) -----------------------------------
    Code("EP0900", "Custom_Op_Package_Load_Error",
         "Failed to load custom operator package {package} ({file}). Reason: {reason}.",
         solution="Fix the package or remove it from ASCEND_CUSTOM_OPP_PATH (or uninstall it); "
                  "see docs/custom-ops.md.", ours=True),
    Code("EP0901", "Custom_Op_Package_Invalid",
         "Op {optype} of custom operator package {package} ({file}) is invalid: {reason}.",
         solution="Complete the declaration as docs/custom-ops.md describes.", ours=True),
    Code("EP0902", "Custom_Op_Package_Clash",
         "Op {optype} of custom operator package {package} ({file}) is already defined by "
         "{other}.",
         solution="Rename the op, or keep one of the packages (the first in "
                  "ASCEND_CUSTOM_OPP_PATH order keeps it).", ours=True),
    Code("EP0903", "Custom_Op_Kernel_Error",
         "The C kernel of op {optype} of custom operator package {package} ({file}) does not "
         "compile: {reason}.",
         solution="Fix the kernel source; docs/kernel-abi.md gives the ABI and "
                  "docs/custom-ops.md the GE_* macros.", ours=True),
    Code("EP0904", "Custom_Op_Mapping_Error",
         "Mapping {mapping} of custom operator package {package} ({file}) names op {optype}, "
         "which is neither a built-in op nor defined by a package.",
         solution="Declare the op in the package or correct the mapping's op_type.",
         ours=True),
    Code("EP0905", "Custom_Op_Package_Missing",
         "The model uses op {optype} of custom operator package {package} {version}, which is "
         "not installed.",
         solution="Install the package or add its directory to ASCEND_CUSTOM_OPP_PATH.",
         ours=True),
    Code("EP0906", "Custom_Op_Dtype_Error",
         "Input {input} of op {opname} ({optype}) has dtype {dtype}; the op allows {allowed}.",
         solution="Cast the input, or extend the op's Port dtypes in its package.", ours=True),
    # ---- warnings ------------------------------------------------------------------------
    Code("WP0001", "Option_Without_Effect",
         "Option --{parameter}={value} is accepted but has no effect in this implementation "
         "(the target is the host CPU).", ours=True),
    Code("WP0002", "Option_Ignored",
         "Raw GE option {key} in level [{level}] is not supported in ATC and was ignored.",
         ours=True),
    Code("WP0003", "Output_Not_Written",
         "{file} was not written ({reason}); the result of the run does not depend on it.",
         ours=True),
    Code("WP0220", "Option_Deprecated",
         "Option input_shape_range is deprecated and will be removed in future version,please "
         "use input_shape instead", ours=True),
    Code("WP0221", "Option_Overridden",
         "Option input_shape cannot use with option input_shape_range,it will be override by "
         "input_shape_range", ours=True),
    Code("WP0250", "Precision_Config_Unmatched",
         "Lines {lines} of the --{parameter} file {file} match no op of the graph; they were "
         "ignored.", ours=True),
    Code("WP0600", "Caffe_Legacy_Layers",
         "{file} uses the legacy V1 \"layers\" structure; it was upgraded to \"layer\" "
         "(CANN refuses such files with E11021/E11023).", ours=True),
    Code("WP0700", "Fuzzy_Build_Entry",
         "Entry {entry} of {file} sets compile_flag 1 (fuzzy build, deprecated): as in CANN it "
         "is not compiled itself; the ops after it are compiled at their exact shapes.",
         ours=True),
    Code("WP0010", "Unknown_Pass_Name",
         "Pass switch names unknown pass {name}; closest registered names: {closest}.",
         ours=True),
    Code("WP0110", "Unknown_Engine_Name",
         "Engine name {name} in ge.exec.exclude_engines is unknown and was ignored; known "
         "names (case-sensitive): {known}.", ours=True),
    Code("WP0111", "Invalid_Setting", "{source}={value} is invalid ({allowed}); {fallback}.",
         ours=True),
    Code("WP0112", "Corrupt_Cache_Entry",
         "Kernel cache entry {entry} is not used ({reason}); {fallback}.", ours=True),
    Code("WP0113", "Kernel_Cache_Fault", "Kernel cache {path}: {reason}; {fallback}.",
         ours=True),
    Code("WP0114", "Foreign_Cache_File",
         "{path} in the kernel cache is not an entry or a temporary of ours ({reason}); it is "
         "left alone.", ours=True),
    Code("WP0120", "Remote_Cache_Not_Used",
         "Remote kernel cache {store} (set in {source}) is not used: {reason}.", ours=True),
    Code("WP0121", "Remote_Cache_Entry_Refused",
         "Remote kernel cache entry {entry} is refused ({reason}); it is not loaded, and the "
         "kernel is compiled here. Further refusals of this compile go to the log.", ours=True),
    Code("WP0122", "Remote_Cache_Fault",
         "Remote kernel cache {store}: {reason}; {fallback}. The compile goes on with the local "
         "cache.", ours=True),
    Code("WP0140", "Input_Shape_Needed",
         "Input {input} has the shape {shape} in the model, unknown at dims {dims}; "
         "{suggestion} makes every input static (replace the 1s by the sizes you deploy).",
         ours=True),
    Code("WP0301", "Unchecked_Model",
         "Model {file} carries no integrity checksum (its header's checksum area is zero, as "
         "in CANN's OMs and ours before the checksum existed); it is read unverified.",
         ours=True),
    Code("WP0900", "Custom_Op_Package_Shadowed",
         "Custom operator package {package} at {file} is not loaded: a package of that name "
         "was loaded first from {other}.", ours=True),
)

_BY_CODE = {entry.code: entry for entry in CODES}     # unique codes: test_matrix_codes.py


def lookup(code: str) -> Code | None:
    return _BY_CODE.get(code)


class _KeepMissing(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


# What one parameter may quote: a path of PATH_MAX and then some, never a 2-million-element
# attribute echoed into a 17 MB report.
QUOTE_LIMIT = 8192


def _quoted(value) -> str:
    text = str(value)
    if len(text) <= QUOTE_LIMIT:
        return text
    return f"{text[:QUOTE_LIMIT]}... ({len(text)} characters in all)"


def _fill(template: str, params: dict | None) -> str:
    return template.format_map(_KeepMissing({k: _quoted(v) for k, v in (params or {}).items()}))


def placeholders(code: str) -> frozenset[str]:
    """The parameter names a raise site of `code` must pass: the template's and the detail's."""
    entry = lookup(code)
    texts = (entry.template, entry.detail) if entry else ()
    return frozenset(name for text in texts for _, name, _, _ in Formatter().parse(text) if name)


def format_parts(code: str, params: dict | None = None) -> tuple[str, str]:
    """(headline message, detail) of one record; the detail is "" when the code has none."""
    entry = lookup(code)
    if entry is None:
        return " ".join(f"{k}={v}" for k, v in (params or {}).items()), ""
    return _fill(entry.template, params), _fill(entry.detail, params).strip()


def format_message(code: str, params: dict | None = None) -> str:
    """The whole message of one record on one line (headline, then the detail if any)."""
    headline, detail = format_parts(code, params)
    return f"{headline} {detail}" if detail else headline


def is_internal(code: str) -> bool:
    """Codes whose digits 3..6 are 9999 or 8888 are internal (§7.1)."""
    return code[2:6] in ("9999", "8888")
