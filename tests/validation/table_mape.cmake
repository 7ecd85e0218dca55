# `rapid validate` prints table TABLE (its rows and its MAPE line) and that MAPE is at most
# BOUND percent; the block is echoed so a failure shows the error per row.
#   cmake -DRAPID=<rapid> -DTABLE=<file.csv> -DBOUND=<percent> -P table_mape.cmake
execute_process(COMMAND ${RAPID} validate RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rapid validate exited ${rc}: ${err}")
endif()
string(FIND "${out}" "== ${TABLE} " start)
if(start EQUAL -1)
  message(FATAL_ERROR "rapid validate printed no table ${TABLE}")
endif()
string(SUBSTRING "${out}" ${start} -1 block)
string(FIND "${block}" "\n\n" end)
string(SUBSTRING "${block}" 0 ${end} block)
message(STATUS "\n${block}")
if(NOT block MATCHES "\n  MAPE: ([0-9.]+)% over ([0-9]+) rows")
  message(FATAL_ERROR "no MAPE line for ${TABLE}")
endif()
set(mape ${CMAKE_MATCH_1})
if(NOT mape LESS_EQUAL ${BOUND})
  message(FATAL_ERROR "${TABLE}: MAPE ${mape}% above ${BOUND}%")
endif()
message(STATUS "${TABLE}: MAPE ${mape}% <= ${BOUND}%")
