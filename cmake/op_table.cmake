# The op table (Note [Op table]): scripts/gen_op_table.py turns src/graph/ops.yaml into the
# graph catalogue (linked into nnfit_graph) and the CPU kernel registrations (nnfit_backend)
# at build time. Only the two generated files depend on the table, so adding an op
# recompiles them and the op's own files, nothing else.
find_program(NNFIT_PYTHON3 NAMES python3 python REQUIRED)
set(NNFIT_OP_TABLE ${PROJECT_SOURCE_DIR}/src/graph/ops.yaml)
set(NNFIT_OP_TABLE_DIR ${PROJECT_BINARY_DIR}/generated)
file(MAKE_DIRECTORY ${NNFIT_OP_TABLE_DIR})
add_custom_command(
  OUTPUT ${NNFIT_OP_TABLE_DIR}/op_table_graph.cpp ${NNFIT_OP_TABLE_DIR}/op_table_kernels.cpp
  COMMAND ${NNFIT_PYTHON3} ${PROJECT_SOURCE_DIR}/scripts/gen_op_table.py ${NNFIT_OP_TABLE}
          ${NNFIT_OP_TABLE_DIR}/op_table_graph.cpp ${NNFIT_OP_TABLE_DIR}/op_table_kernels.cpp
  DEPENDS ${NNFIT_OP_TABLE} ${PROJECT_SOURCE_DIR}/scripts/gen_op_table.py
  COMMENT "Generating the op table's C++ from src/graph/ops.yaml"
  VERBATIM)
target_sources(nnfit_graph PRIVATE ${NNFIT_OP_TABLE_DIR}/op_table_graph.cpp)
target_sources(nnfit_backend PRIVATE ${NNFIT_OP_TABLE_DIR}/op_table_kernels.cpp)
