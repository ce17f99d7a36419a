// Hand-pipelined isqrt32 (benchmarks/hand.py): the digit-by-digit square root, one row a stage
// (rows 0 and 1 share the first) in 15 stages, each row as wide as `rem <= 2 * root` allows
// (row r: an (r + 3)-bit difference, an (r + 2)-bit remainder, an (r + 1)-bit root), with the
// valid/ready handshake of our cores.
// verilator lint_off WIDTHEXPAND
// verilator lint_off WIDTHTRUNC
// verilator lint_off UNUSEDSIGNAL
module isqrt32 (
    input  wire        clk,
    input  wire        rst,
    input  wire        in_valid,
    output wire        in_ready,
    input  wire [31:0] x,
    output wire        out_valid,
    input  wire        out_ready,
    output wire [15:0] out
);
    wire en = ~out_valid | out_ready;
    assign in_ready = en & ~rst;
    reg [14:0] valid;
    assign out_valid = valid[14];
    always @(posedge clk) begin
        if (rst) valid <= 15'b0;
        else if (en) valid <= {valid[13:0], in_valid & in_ready};
    end
    genvar r;
    generate
        for (r = 0; r < 16; r = r + 1) begin : row
            localparam W = r + 3;  // bits of the remainder with the next pair brought down
            wire [17:0] rem_in;    // the rows before: r + 1 bits of remainder, r of root
            wire [15:0] root_in;
            wire [31:0] x_in;
            if (r == 0) begin : first
                assign rem_in = 18'd0;
                assign root_in = 16'd0;
                assign x_in = x;
            end else if (r == 1) begin : same_stage  // rows 0 and 1 share stage 0
                assign rem_in = row[0].rem_out;
                assign root_in = row[0].root_out;
                assign x_in = x;
            end else begin : registered
                assign rem_in = row[r - 1].bank.rem_q;
                assign root_in = row[r - 1].bank.root_q;
                assign x_in = row[r - 1].bank.x_q;
            end
            wire [1:0] pair = x_in[31 - 2 * r -: 2];
            wire [W - 1:0] a = {rem_in, pair};      // the low W bits: the rest are 0
            wire [W - 1:0] t = {root_in, 2'b01};    // 4 root + 1
            wire [W:0] d = {1'b0, a} - {1'b0, t};
            wire ge = ~d[W];
            wire [17:0] rem_out = ge ? d[W - 2:0] : a[W - 2:0];
            wire [15:0] root_out = {root_in, ge};
            if (r >= 1) begin : bank
                reg [17:0] rem_q;
                reg [15:0] root_q;
                reg [31:0] x_q;
                always @(posedge clk) if (en) begin
                    rem_q <= rem_out;
                    root_q <= root_out;
                    x_q <= x_in;
                end
            end
        end
    endgenerate
    assign out = row[15].bank.root_q;
endmodule
