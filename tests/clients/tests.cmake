# The clients of the metrics server (examples/clients/), each tested
# against a fake server of the contract (clients/fake_metrics_server.py).
# Debian's interpreter, named in full: another python may come first on
# PATH (pyenv, conda) and lack torch.
set(SW_PYTHON /usr/bin/python3)

add_executable(clients_probe clients/c_probe.c)
target_link_libraries(clients_probe PRIVATE sweep_report)

add_test(NAME clients.python
  COMMAND ${SW_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/clients/test_sweep_client.py)
add_test(NAME clients.c
  COMMAND ${SW_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/clients/test_c_client.py)
add_test(NAME clients.trainer
  COMMAND ${SW_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/clients/test_train_mlp.py)
# The package (examples/clients/python/): installed offline into a fresh
# venv; and a W&B trainer, through the sweep binary.
add_test(NAME clients.package
  COMMAND ${SW_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/clients/test_package.py)
add_test(NAME clients.wandb
  COMMAND ${SW_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/clients/test_wandb.py)
set_tests_properties(clients.python clients.c clients.trainer clients.package
  clients.wandb PROPERTIES
  LABELS clients TIMEOUT 300
  ENVIRONMENT "SW_C_PROBE=$<TARGET_FILE:clients_probe>;SW_REPORT_EXAMPLE=$<TARGET_FILE:report_example>;SW_BIN=$<TARGET_FILE:sweep>")
