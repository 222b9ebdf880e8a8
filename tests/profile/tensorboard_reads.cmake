# TensorBoard's own event loader reads what nnfit writes (tensorboard_reads_test.py): a
# small program trains a tiny model with the TensorBoard callback, the script loads the
# logs in a venv holding tensorboard from PyPI. Skips (code 77) where PyPI is unreachable.
add_executable(nnfit_write_tensorboard_logs ${CMAKE_CURRENT_LIST_DIR}/write_tensorboard_logs.cpp)
target_link_libraries(nnfit_write_tensorboard_logs PRIVATE nnfit_model nlohmann_json::nlohmann_json)
add_test(NAME TensorBoard.ReadsNnfitLogs
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/tensorboard_reads_test.py
                 $<TARGET_FILE:nnfit_write_tensorboard_logs>)
set_tests_properties(TensorBoard.ReadsNnfitLogs PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
                     ENVIRONMENT "OMP_NUM_THREADS=2")
