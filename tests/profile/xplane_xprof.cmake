# XProf (tensorboard-plugin-profile's current converter) reads the .xplane.pb nnfit writes
# (xplane_xprof_test.py). Skips (code 77) where PyPI is unreachable.
add_executable(nnfit_write_xplane ${CMAKE_CURRENT_LIST_DIR}/write_xplane.cpp)
target_link_libraries(nnfit_write_xplane PRIVATE nnfit_profile)
add_test(NAME XProf.ReadsNnfitXSpace
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/xplane_xprof_test.py $<TARGET_FILE:nnfit_write_xplane>)
set_tests_properties(XProf.ReadsNnfitXSpace PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
