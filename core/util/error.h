// SPDX-License-Identifier: Apache-2.0
#pragma once
// One exception type for failures caused by the user's input (a model, a plan, a
// profile, a flag). It is caught at the edges: the CLI turns it into a one-line
// message and exit code 2, the GUI into a dialog. Library code never aborts on
// user input.

#include <stdexcept>
#include <string>

namespace fx {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// An error about a file: the message reads "<path>: <cause>".
class FileError : public Error {
 public:
  FileError(const std::string& path, const std::string& cause)
      : Error(path + ": " + cause), path_(path), cause_(cause) {}
  const std::string& path() const { return path_; }
  const std::string& cause() const { return cause_; }

 private:
  std::string path_;
  std::string cause_;
};

}  // namespace fx
