// Hand-pipelined popcount64 (benchmarks/hand.py): byte counts, two half sums, the total, in
// 3 stages (54 flip-flops with the valid bits), with the valid/ready handshake of our cores.
// verilator lint_off WIDTHEXPAND
module popcount64 (
    input  wire        clk,
    input  wire        rst,
    input  wire        in_valid,
    output wire        in_ready,
    input  wire [63:0] x,
    output wire        out_valid,
    input  wire        out_ready,
    output wire [63:0] out
);
    wire en = ~out_valid | out_ready;
    assign in_ready = en & ~rst;
    reg [2:0] v;
    assign out_valid = v[2];
    always @(posedge clk) begin
        if (rst) v <= 3'b0;
        else if (en) v <= {v[1:0], in_valid & in_ready};
    end
    function [3:0] cnt8(input [7:0] b);
        cnt8 = b[0] + b[1] + b[2] + b[3] + b[4] + b[5] + b[6] + b[7];
    endfunction
    reg [3:0] c [0:7];
    reg [5:0] h0, h1;
    reg [6:0] t;
    integer i;
    always @(posedge clk) if (en) begin
        for (i = 0; i < 8; i = i + 1) c[i] <= cnt8(x[8*i +: 8]);
        h0 <= c[0] + c[1] + c[2] + c[3];
        h1 <= c[4] + c[5] + c[6] + c[7];
        t <= h0 + h1;
    end
    assign out = {57'd0, t};
endmodule
