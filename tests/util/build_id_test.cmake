# SPDX-License-Identifier: Apache-2.0
# cmake/fx_build_id.cmake on a scratch source tree without .git (as a tarball unpacks):
# the id is 16 hex digits, the same for the same sources wherever they lie (a fresh
# clone), and changes with a source file, a build file or the compiler, not with files
# that are not built (docs).
#
#   cmake -DSCRIPT=<cmake/fx_build_id.cmake> -DWORK=<scratch folder> -P build_id_test.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/src/core/util ${WORK}/src/app)
file(WRITE ${WORK}/src/CMakeLists.txt "project(x)\n")
file(WRITE ${WORK}/src/core/util/a.cc "int a = 1;\n")
file(WRITE ${WORK}/src/app/main.cc "int main() {}\n")

function(build_id out src salt)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${src} -DOUT=${WORK}/id.cc "-DSALT=${salt}"
                          -P ${SCRIPT} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "fx_build_id.cmake failed on ${src}: ${err}")
  endif()
  file(READ ${WORK}/id.cc text)
  if(NOT text MATCHES "return \"([0-9a-f]+)\"")
    message(FATAL_ERROR "no id in the generated file:\n${text}")
  endif()
  string(LENGTH "${CMAKE_MATCH_1}" n)
  if(NOT n EQUAL 16)
    message(FATAL_ERROR "id ${CMAKE_MATCH_1} is not 16 hex digits")
  endif()
  set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

function(expect_same a b what)
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "${what}: ids differ (${a} vs ${b})")
  endif()
endfunction()
function(expect_differ a b what)
  if(a STREQUAL b)
    message(FATAL_ERROR "${what}: id unchanged (${a})")
  endif()
endfunction()

build_id(first ${WORK}/src "GNU 14 RelWithDebInfo")
build_id(again ${WORK}/src "GNU 14 RelWithDebInfo")
expect_same(${first} ${again} "same tree built again")
file(COPY ${WORK}/src/ DESTINATION ${WORK}/clone)
build_id(clone ${WORK}/clone "GNU 14 RelWithDebInfo")
expect_same(${first} ${clone} "the same sources in another folder")

file(WRITE ${WORK}/src/core/util/notes.md "not built\n")
build_id(docs ${WORK}/src "GNU 14 RelWithDebInfo")
expect_same(${first} ${docs} "a file that is not built")

file(WRITE ${WORK}/src/core/util/a.cc "int a = 2;\n")
build_id(edited ${WORK}/src "GNU 14 RelWithDebInfo")
expect_differ(${first} ${edited} "a source file changed")

file(WRITE ${WORK}/src/app/CMakeLists.txt "add_executable(m main.cc)\n")
build_id(cmake_edit ${WORK}/src "GNU 14 RelWithDebInfo")
expect_differ(${edited} ${cmake_edit} "a CMakeLists.txt added")

build_id(compiler ${WORK}/src "Clang 19 RelWithDebInfo")
expect_differ(${cmake_edit} ${compiler} "another compiler")
file(REMOVE_RECURSE ${WORK})
