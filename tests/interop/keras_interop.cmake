# Keras <-> nnfit with real Keras 3, tf-keras and TensorFlow from PyPI (keras_interop.py):
# files Keras saves predict the same in nnfit and the other way round. The venv is made
# once outside the checkout by scripts/keras_venv.sh (a minute or two on first use).
if(TARGET nnfit)
  add_test(NAME Keras.InteropBothWays
           COMMAND bash -c "py=$(\"$0\") && exec \"$py\" \"$1\" \"$2\" \"$3\""
                   ${PROJECT_SOURCE_DIR}/scripts/keras_venv.sh ${CMAKE_CURRENT_LIST_DIR}/keras_interop.py
                   $<TARGET_FILE:nnfit> ${CMAKE_BINARY_DIR}/keras_interop)
  set_tests_properties(Keras.InteropBothWays PROPERTIES LABELS interop TIMEOUT 1500
                       ENVIRONMENT "OMP_NUM_THREADS=2;TF_CPP_MIN_LOG_LEVEL=3")
endif()
# Every layer and option against Keras 3: forward within the case's tolerance, and one SGD
# step's weight change against Keras's GradientTape gradients (keras_layers.py).
if(TARGET nnfit)
  add_test(NAME Keras.LayerParity
           COMMAND bash -c "py=$(\"$0\") && exec \"$py\" \"$1\" \"$2\" \"$3\""
                   ${PROJECT_SOURCE_DIR}/scripts/keras_venv.sh ${CMAKE_CURRENT_LIST_DIR}/keras_layers.py
                   $<TARGET_FILE:nnfit> ${CMAKE_BINARY_DIR}/keras_layers)
  set_tests_properties(Keras.LayerParity PROPERTIES LABELS interop TIMEOUT 1500
                       ENVIRONMENT "OMP_NUM_THREADS=2;TF_CPP_MIN_LOG_LEVEL=3")
endif()
# The same under Keras's mixed_bfloat16 policy, every 4th case (the whole set:
# keras_layers.py NNFIT WORK --policy mixed_bfloat16), at bfloat16's tolerances.
if(TARGET nnfit)
  add_test(NAME Keras.LayerParityMixedBfloat16
           COMMAND bash -c "py=$(\"$0\") && exec \"$py\" \"$1\" \"$2\" \"$3\" --policy mixed_bfloat16 --every 4"
                   ${PROJECT_SOURCE_DIR}/scripts/keras_venv.sh ${CMAKE_CURRENT_LIST_DIR}/keras_layers.py
                   $<TARGET_FILE:nnfit> ${CMAKE_BINARY_DIR}/keras_layers_bf16)
  set_tests_properties(Keras.LayerParityMixedBfloat16 PROPERTIES LABELS interop TIMEOUT 1500
                       ENVIRONMENT "OMP_NUM_THREADS=2;TF_CPP_MIN_LOG_LEVEL=3")
endif()
# Every loss, optimizer and metric against Keras 3: loss values (from Keras's saved compile
# config and from a training step) and one SGD step's weight change; three steps of each
# optimizer; metrics over several batches (keras_training.py).
if(TARGET nnfit)
  add_test(NAME Keras.TrainingParity
           COMMAND bash -c "py=$(\"$0\") && exec \"$py\" \"$1\" \"$2\" \"$3\""
                   ${PROJECT_SOURCE_DIR}/scripts/keras_venv.sh ${CMAKE_CURRENT_LIST_DIR}/keras_training.py
                   $<TARGET_FILE:nnfit> ${CMAKE_BINARY_DIR}/keras_training)
  set_tests_properties(Keras.TrainingParity PROPERTIES LABELS interop TIMEOUT 900
                       ENVIRONMENT "OMP_NUM_THREADS=2;TF_CPP_MIN_LOG_LEVEL=3")
endif()
