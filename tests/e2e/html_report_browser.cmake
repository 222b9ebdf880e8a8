# The HTML report in headless Chromium (html_report_browser.cpp): its own program rather
# than part of nnfit_e2e_tests, so that it can exit 77 (CTest's SKIP_RETURN_CODE) where no
# Chromium is installed instead of passing silently.
add_executable(nnfit_html_report_browser ${CMAKE_CURRENT_LIST_DIR}/html_report_browser.cpp)
target_include_directories(nnfit_html_report_browser PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(nnfit_html_report_browser PRIVATE nnfit_io nlohmann_json::nlohmann_json GTest::gtest)
target_compile_options(nnfit_html_report_browser PRIVATE -O1)
target_compile_definitions(nnfit_html_report_browser PRIVATE NNFIT_CLI="$<TARGET_FILE:nnfit>")
add_dependencies(nnfit_html_report_browser nnfit)
add_test(NAME HtmlReport.RendersInHeadlessChromium COMMAND nnfit_html_report_browser)
set_tests_properties(HtmlReport.RendersInHeadlessChromium PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
                     ENVIRONMENT "OMP_NUM_THREADS=2")
